import { sign as octokitSign, verify as octokitVerify } from "@octokit/webhooks-methods";
import { describe, expect, test } from "vitest";
import { github } from "../src/index.js";

// @octokit/webhooks-methods@6 (Node >= 20) is the library GitHub's own Octokit uses.
const secret = "octokit interop secret";
const payload = JSON.stringify({ action: "opened", number: 1, repository: { full_name: "postel/postel" } });

describe("interoperability with @octokit/webhooks-methods", () => {
  test("we verify a signature made by octokit's sign()", async () => {
    const signature = await octokitSign(secret, payload);
    const request = {
      body: Buffer.from(payload),
      headers: { "X-Hub-Signature-256": signature, "X-GitHub-Delivery": "d-1" },
    };
    expect(github({ secret }).verify(request, 0)).toMatchObject({ id: "d-1", keyIndex: 0 });
  });

  test("octokit's verify() accepts the signature we produce", async () => {
    const { "x-hub-signature-256": signature } = github.sign({ secret, body: payload });
    expect(await octokitVerify(secret, payload, signature)).toBe(true);
    expect(await octokitVerify("wrong", payload, signature)).toBe(false);
  });
});
