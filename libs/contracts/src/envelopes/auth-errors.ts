/** The messages of refused authentication (SPEC "Authentication" gives the revoked and expired ones). */
export const AuthErrors = {
  missingKey: 'API key is required in the apikey header',
  invalidKey: 'Invalid API key',
  revoked: 'API key has been revoked',
  expired: 'API key has expired',
  companyMismatch: 'X-Company-Id does not match the company of the API key',
  invalidToken: 'Invalid or revoked ingest token',
  adminRequired: 'Administrator token required (Authorization: Bearer <ADMIN_TOKEN>)',
} as const;
