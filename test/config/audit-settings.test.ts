import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseSettings } from "../../config/Settings.js"

describe("parseSettings AUDIT_RETENTION_DAYS", () => {
  it("defaults to 90 days and takes 1 to 36500; anything else stops start-up naming the variable", () => {
    const retention = (value?: string) =>
      Either.map(
        parseSettings(value === undefined ? {} : { SERVICE_AUDIT_RETENTION_DAYS: value }),
        (resolved) => resolved.settings.storage.auditRetentionDays
      )
    expect(retention()).toEqual(Either.right(90))
    expect(retention("7")).toEqual(Either.right(7))
    expect(retention("36500")).toEqual(Either.right(36500))
    for (const value of ["0", "36501", "ninety", "1.5"]) {
      const problems = Either.getLeft(retention(value))
      expect(problems._tag).toBe("Some")
      expect(String(problems.pipe((option) => (option._tag === "Some" ? option.value : [])))).toContain(
        "SERVICE_AUDIT_RETENTION_DAYS"
      )
    }
  })
})
