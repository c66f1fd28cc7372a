export { createLayoutReplica, httpSnapshotFetcher, AmbiguousLocationError, ReplicaUnavailableError } from './replica';
export type { LayoutReplica, LayoutReplicaOptions, ReplicaNode, FetchSnapshot } from './replica';
