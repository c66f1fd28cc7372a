import { buildApiDocument } from './api-host';
import { buildIngestDocument } from './ingest-host';
import { markDeprecated } from './deprecated';
import type { OpenApiDocument } from './operations';

let api: OpenApiDocument | undefined;
let ingest: OpenApiDocument | undefined;

/** The OpenAPI 3.1 document of {base_url}, built once from the request schemas the apps validate with. */
export function apiDocument(): OpenApiDocument {
  return (api ??= markDeprecated(buildApiDocument()) as OpenApiDocument);
}

/** The OpenAPI 3.1 document of {webhook_url}. */
export function ingestDocument(): OpenApiDocument {
  return (ingest ??= buildIngestDocument() as OpenApiDocument);
}

export { findOperation, operationsOf, routeDocumented } from './operations';
export type { DocumentedOperation, OpenApiDocument } from './operations';
export { API_HOST_ROUTES, apiHostAppFor } from './hosts';
export { BOOKING_LIST_STATUSES } from './portal-overview';
export type { ApiHostApp } from './hosts';
