/**
 * The ways a user can sign in: a password, a linked provider account, a passkey. Removing one
 * (unlinking a provider, deleting a passkey) is refused when it would leave none.
 */
export interface SignInMethods {
  readonly hasPassword: boolean
  readonly linkedProviders: ReadonlyArray<string>
  readonly passkeys: number
}

/** Whether any way to sign in is left. */
export const canSignIn = (methods: SignInMethods): boolean =>
  methods.hasPassword || methods.linkedProviders.length > 0 || methods.passkeys > 0
