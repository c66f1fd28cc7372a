import express from 'express';
import { listRoutes } from './routes';

describe('listRoutes', () => {
  it('lists every route with its full path: mounted routers, parameters, arrays of mount paths', () => {
    const app = express();
    const reads = express.Router();
    reads.get('/all', (_req, res) => void res.end());
    reads.get('/:levels', (_req, res) => void res.end());
    const admin = express.Router({ mergeParams: true });
    admin.put('/layout', (_req, res) => void res.end());
    admin.delete('/:levels/:id', (_req, res) => void res.end());
    app.use(['/api/v4/location', '/api/v3/location'], (_req, _res, next) => next(), reads);
    app.use('/admin/v1/companies/:companyId', admin);
    app.use(express.Router().post('/webhook/retry', (_req, res) => void res.end()));
    app.get('/healthz', (_req, res) => void res.end());
    expect(listRoutes(app)).toEqual([
      'DELETE /admin/v1/companies/:companyId/:levels/:id',
      'GET /api/v3/location/:levels',
      'GET /api/v3/location/all',
      'GET /api/v4/location/:levels',
      'GET /api/v4/location/all',
      'GET /healthz',
      'POST /webhook/retry',
      'PUT /admin/v1/companies/:companyId/layout',
    ]);
  });
});
