import { describe, expect, it } from "@effect/vitest"
import { makePasswordPolicy, passwordProblems } from "../../domain/Password.js"

const TOO_SHORT = (n: number) => `must be at least ${n} characters long`
const TOO_LONG = (n: number) => `must be at most ${n} characters long`
const UPPERCASE = "must contain an uppercase letter"
const LOWERCASE = "must contain a lowercase letter"
const DIGIT = "must contain a digit"
const SPECIAL = "must contain a special character"
const COMMON = "is too common"

describe("makePasswordPolicy", () => {
  it("defaults to 8..256 characters with no character-class rules and no blocked passwords", () => {
    expect(makePasswordPolicy()).toEqual({
      min_length: 8,
      max_length: 256,
      require_uppercase: false,
      require_lowercase: false,
      require_digit: false,
      require_special: false,
      blocked_passwords: []
    })
  })

  it("keeps the defaults it is not told to override", () => {
    const policy = makePasswordPolicy({ min_length: 12, require_digit: true })
    expect(policy.min_length).toBe(12)
    expect(policy.require_digit).toBe(true)
    expect(policy.max_length).toBe(256)
    expect(policy.require_uppercase).toBe(false)
  })
})

describe("passwordProblems", () => {
  describe("with the default policy", () => {
    const policy = makePasswordPolicy()

    it("refuses 7 characters and accepts 8", () => {
      expect(passwordProblems(policy, "abcdefg")).toEqual([TOO_SHORT(8)])
      expect(passwordProblems(policy, "abcdefgh")).toEqual([])
    })

    it("accepts 256 characters and refuses 257", () => {
      expect(passwordProblems(policy, "x".repeat(256))).toEqual([])
      expect(passwordProblems(policy, "x".repeat(257))).toEqual([TOO_LONG(256)])
    })

    it("refuses the empty password", () => {
      expect(passwordProblems(policy, "")).toEqual([TOO_SHORT(8)])
    })

    it("asks for no character class", () => {
      expect(passwordProblems(policy, "        ")).toEqual([])
      expect(passwordProblems(policy, "12345678")).toEqual([])
    })
  })

  it("lists every broken rule, in the stable order of the rules", () => {
    const policy = makePasswordPolicy({
      require_uppercase: true,
      require_lowercase: true,
      require_digit: true,
      require_special: true,
      blocked_passwords: ["abc"]
    })
    expect(passwordProblems(policy, "abc")).toEqual([TOO_SHORT(8), UPPERCASE, DIGIT, SPECIAL, COMMON])
    expect(passwordProblems(policy, "ABC")).toEqual([TOO_SHORT(8), LOWERCASE, DIGIT, SPECIAL, COMMON])
    expect(passwordProblems(policy, "")).toEqual([TOO_SHORT(8), UPPERCASE, LOWERCASE, DIGIT, SPECIAL])
    expect(passwordProblems(policy, "Abcdef1!")).toEqual([])
  })

  it("lists the maximum length before the character-class rules", () => {
    const policy = makePasswordPolicy({ max_length: 10, require_digit: true, require_uppercase: true })
    expect(passwordProblems(policy, "abcdefghijk")).toEqual([TOO_LONG(10), UPPERCASE, DIGIT])
  })

  describe("length counts code points, not UTF-16 units", () => {
    it("accepts 8 emoji (16 UTF-16 units) at a minimum of 8 and refuses 7", () => {
      const policy = makePasswordPolicy()
      expect("😀".repeat(7).length).toBe(14)
      expect(passwordProblems(policy, "😀".repeat(7))).toEqual([TOO_SHORT(8)])
      expect(passwordProblems(policy, "😀".repeat(8))).toEqual([])
    })

    it("accepts 4 emoji at a maximum of 4 and refuses 5", () => {
      const policy = makePasswordPolicy({ min_length: 1, max_length: 4 })
      expect(passwordProblems(policy, "🔑🔑🔑🔑")).toEqual([])
      expect(passwordProblems(policy, "🔑🔑🔑🔑🔑")).toEqual([TOO_LONG(4)])
    })
  })

  describe("blocked passwords", () => {
    const policy = makePasswordPolicy({ blocked_passwords: ["Password123", "letmein!!"] })

    it("are refused whatever their case", () => {
      expect(passwordProblems(policy, "password123")).toEqual([COMMON])
      expect(passwordProblems(policy, "PASSWORD123")).toEqual([COMMON])
      expect(passwordProblems(policy, "Password123")).toEqual([COMMON])
      expect(passwordProblems(policy, "LetMeIn!!")).toEqual([COMMON])
    })

    it("match the whole password only", () => {
      expect(passwordProblems(policy, "password1234")).toEqual([])
      expect(passwordProblems(policy, "my password123")).toEqual([])
    })
  })

  describe("character classes are Unicode-aware", () => {
    it("require_uppercase accepts any uppercase letter", () => {
      const policy = makePasswordPolicy({ require_uppercase: true })
      expect(passwordProblems(policy, "écoleÉcole")).toEqual([])
      expect(passwordProblems(policy, "ΣΟΦΊΑσοφία")).toEqual([])
      expect(passwordProblems(policy, "écoleécole")).toEqual([UPPERCASE])
      expect(passwordProblems(policy, "12345678")).toEqual([UPPERCASE])
    })

    it("require_lowercase accepts any lowercase letter", () => {
      const policy = makePasswordPolicy({ require_lowercase: true })
      expect(passwordProblems(policy, "STRAßE12")).toEqual([])
      expect(passwordProblems(policy, "ÉCOLEÉCOLE")).toEqual([LOWERCASE])
    })

    it("letters without case satisfy neither case rule", () => {
      const policy = makePasswordPolicy({ require_uppercase: true, require_lowercase: true })
      expect(passwordProblems(policy, "パスワードパスワード")).toEqual([UPPERCASE, LOWERCASE])
    })

    it("require_digit accepts decimal digits of any script", () => {
      const policy = makePasswordPolicy({ require_digit: true })
      expect(passwordProblems(policy, "password٣")).toEqual([])
      expect(passwordProblems(policy, "password7")).toEqual([])
      expect(passwordProblems(policy, "passwordⅣ")).toEqual([DIGIT])
    })

    it("require_special wants a character that is neither a letter nor a digit", () => {
      const policy = makePasswordPolicy({ require_special: true })
      expect(passwordProblems(policy, "Straße12345")).toEqual([SPECIAL])
      expect(passwordProblems(policy, "ΣοφίαΣοφία")).toEqual([SPECIAL])
      expect(passwordProblems(policy, "pass word")).toEqual([])
      expect(passwordProblems(policy, "password😀")).toEqual([])
      expect(passwordProblems(policy, "password-1")).toEqual([])
    })
  })
})
