import { randomBytes } from "node:crypto"
import { v7 as uuidv7 } from "uuid"
import { UserId, type UserIdType } from "../domain/User.js"

/**
 * A new random user id for USER_ID_TYPE uuid (v7) or string: 16 random bytes as 22 base64url
 * characters (128 bits, unguessable, URL-safe). A string id always holds a non-digit, so it is
 * never taken for an integer id (the user object answers those as numbers).
 */
export const randomUserId = (type: "uuid" | "string"): UserId => {
  if (type === "uuid") return UserId.make(uuidv7())
  for (;;) {
    const id = randomBytes(16).toString("base64url")
    if (!/^[0-9]+$/.test(id)) return UserId.make(id)
  }
}

/** How a deployment's users are stored: the form of new ids, and custom fields no two users may share. */
export interface UserRepoOptions {
  /** USER_ID_TYPE: the form of the ids a repository makes (uuid by default). */
  readonly idType?: UserIdType
  /** Custom fields no two users may share a value of (a custom LOGIN_FIELD). */
  readonly uniqueFields?: ReadonlyArray<string>
}
