import type { Connection, Model, Schema } from 'mongoose';

/**
 * Registers a model once per connection (each domain module owns its schema). The cast goes
 * through `unknown` on purpose: mongoose's generic `connection.model<T>()` overloads make the
 * TypeScript compiler run out of memory.
 */
export function defineModel<T>(connection: Connection, name: string, schema: Schema): Model<T> {
  const model: unknown = connection.models[name] ?? connection.model(name, schema);
  return model as Model<T>;
}
