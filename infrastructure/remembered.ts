/**
 * The last `capacity` values set, by key: when full, setting a new key forgets the oldest one.
 * For the results of pure decodings that hot paths repeat (an access token's claims, a user's
 * row), so that memory stays bounded however many distinct keys come by. Oldest first rather
 * than least recently used: a hit then costs one lookup and no reordering, and a key forgotten
 * while still in use costs one decoding to be remembered again.
 */
export interface Remembered<K, V> {
  readonly get: (key: K) => V | undefined
  readonly set: (key: K, value: V) => void
}

export const remembered = <K, V>(capacity: number): Remembered<K, V> => {
  const values = new Map<K, V>()
  return {
    get: (key) => values.get(key),
    set: (key, value) => {
      if (values.size >= capacity && !values.has(key)) {
        const oldest = values.keys().next()
        if (oldest.done !== true) values.delete(oldest.value)
      }
      values.set(key, value)
    }
  }
}
