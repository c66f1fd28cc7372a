import axios from 'axios';
import { enforceContract, enforceContractOnFetch } from '@smartlock/testing';

// Every call of every e2e test to {base_url} or {webhook_url} is checked against the OpenAPI documents,
// through axios or through fetch (the typed client of libs/client).
enforceContract(axios);
enforceContractOnFetch();
