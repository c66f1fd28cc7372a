/** The booking row's schema is store.ts's; events/event.schema.ts registers its model from here until it takes store.ts bookingModels. */
export { bookingRowSchema } from './store';
