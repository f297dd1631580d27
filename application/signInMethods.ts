import { Effect, Option } from "effect"
import type { SignInMethods } from "../domain/SignInMethods.js"
import type { UserId } from "../domain/User.js"
import type { OAuthAccountRepo } from "./ports/OAuthAccountRepo.js"
import type { PasskeyRepo } from "./ports/PasskeyRepo.js"
import type { UserRepo } from "./ports/UserRepo.js"

/**
 * The ways a user can sign in, as stored now. Removing one (an OAuth unlink, a passkey deletion)
 * decides on a first reading and checks again with this one after the removal: removals racing
 * over a user's last two ways each saw the other left, so whichever finds none afterwards puts
 * its own back and is refused. One always remains.
 */
export const currentSignInMethods =
  (users: UserRepo["Type"], accounts: OAuthAccountRepo["Type"], passkeys: PasskeyRepo["Type"]) => (userId: UserId) =>
    Effect.all({
      hasPassword: Effect.map(users.findById(userId), (user) =>
        Option.exists(user, (found) => Option.isSome(found.hashed_password))
      ),
      linkedProviders: Effect.map(accounts.listOf(userId), (linked) => linked.map((account) => account.provider)),
      passkeys: passkeys.countOf(userId)
    }) satisfies Effect.Effect<SignInMethods, unknown>
