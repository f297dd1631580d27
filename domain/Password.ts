import { Array as Arr, Either, Redacted } from "effect"
import { InvalidPasswordError } from "./errors.js"

/** The rules a new password must follow. Lengths count characters (code points), not bytes. */
export interface PasswordPolicy {
  readonly min_length: number
  readonly max_length: number
  readonly require_uppercase: boolean
  readonly require_lowercase: boolean
  readonly require_digit: boolean
  readonly require_special: boolean
  /** Compared without regard to case. */
  readonly blocked_passwords: ReadonlyArray<string>
}

export const makePasswordPolicy = (options: Partial<PasswordPolicy> = {}): PasswordPolicy => ({
  min_length: 8,
  max_length: 256,
  require_uppercase: false,
  require_lowercase: false,
  require_digit: false,
  require_special: false,
  blocked_passwords: [],
  ...options
})

/**
 * Every rule the password breaks, in a stable order; empty when it is acceptable. Callers run
 * this before hashing, so an oversized password costs nothing.
 */
export const passwordProblems = (policy: PasswordPolicy, password: string): ReadonlyArray<string> => {
  const length = [...password].length
  const problems: Array<string> = []
  if (length < policy.min_length) problems.push(`must be at least ${policy.min_length} characters long`)
  if (length > policy.max_length) problems.push(`must be at most ${policy.max_length} characters long`)
  if (policy.require_uppercase && !/\p{Lu}/u.test(password)) problems.push("must contain an uppercase letter")
  if (policy.require_lowercase && !/\p{Ll}/u.test(password)) problems.push("must contain a lowercase letter")
  if (policy.require_digit && !/\p{Nd}/u.test(password)) problems.push("must contain a digit")
  if (policy.require_special && !/[^\p{L}\p{Nd}]/u.test(password)) problems.push("must contain a special character")
  const lowered = password.toLowerCase()
  if (policy.blocked_passwords.some((blocked) => blocked.toLowerCase() === lowered)) {
    problems.push("is too common")
  }
  return problems
}

/** The policy's verdict on a new password: every broken rule, or acceptance. */
export const checkPassword = (
  policy: PasswordPolicy,
  password: Redacted.Redacted<string>
): Either.Either<void, InvalidPasswordError> => {
  const problems = passwordProblems(policy, Redacted.value(password))
  return Arr.isNonEmptyReadonlyArray(problems) ? Either.left(new InvalidPasswordError({ problems })) : Either.void
}
