export {
  createLayoutReplica,
  httpSnapshotFetcher,
  waitableFetcher,
  AmbiguousLocationError,
  ReplicaUnavailableError,
  REPLICA_FETCH_FAILED,
  REPLICATION_PREFETCH,
} from './replica';
export type { LayoutReplica, LayoutReplicaOptions, ReplicaNode, FetchSnapshot, SiteTimeChange } from './replica';
