import { Effect, Layer } from "effect"

/**
 * The layer of an adapter whose module is imported when the layer is built, not before: the
 * driver or protocol library under it (pg, ioredis, nodemailer, simplewebauthn...) costs start-up
 * time only to the settings that choose it.
 */
export const imported = <M, A, E, R>(module: () => Promise<M>, build: (adapter: M) => Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(module), build))
