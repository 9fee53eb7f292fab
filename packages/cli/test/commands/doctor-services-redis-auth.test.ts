/**
 * A Redis that refuses the URL's credentials: doctor shows Redis's own answer
 * (WRONGPASS), not the client's bare "Connection is closed.", and never the password.
 */
import { describe, expect, it } from "vitest";
import { appConfigFromText } from "@deerflow-ts/harness/config";
import { serviceFindings } from "../../src/commands/doctor-services";

const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

describe.skipIf(!REDIS)("doctor: Redis refusing the credentials", () => {
  it("names Redis's answer (WRONGPASS) with the password masked", async () => {
    const { host } = new URL(REDIS!);
    // an ACL user that does not exist: refused by the shared test server without changing it
    const url = `redis://nosuch-user:w4lk-pw@${host}/0`;
    const config = appConfigFromText(["stream_bridge:", "  type: redis", `  redis_url: "${url}"`, ""].join("\n")).config;
    const [finding] = await serviceFindings(config, {}, 5000);
    expect(finding!.level).toBe("error");
    expect(finding!.message).toMatch(new RegExp(`^cannot use Redis at redis://nosuch-user:\\*\\*\\*@${host.replace(/\./g, "\\.")}/0: WRONGPASS `));
    expect(JSON.stringify(finding)).not.toContain("w4lk-pw");
  });
});
