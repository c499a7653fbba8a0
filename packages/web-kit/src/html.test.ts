import { describe, expect, test } from "vitest";
import { escapeHtml, html, trustedHtml } from "./html.js";

describe("html", () => {
  test("escapes every interpolated value", () => {
    const hostile = `"><script>alert('x')</script>\`&`;
    expect(html`<td title="${hostile}">${hostile}</td>`.text).toBe(
      `<td title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&#96;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&#96;&amp;</td>`,
    );
  });

  test("nests templates without escaping them twice, and renders arrays item by item", () => {
    const items = ["<a>", "b"].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>`.text).toBe("<ul><li>&lt;a&gt;</li><li>b</li></ul>");
  });

  test("renders nothing for null, undefined and false, and numbers as text", () => {
    expect(html`${null}${undefined}${false}${0}${1.5}`.text).toBe("01.5");
  });

  test("passes only explicitly trusted markup through", () => {
    expect(html`${trustedHtml("<b>ok</b>")}${"<b>no</b>"}`.text).toBe("<b>ok</b>&lt;b&gt;no&lt;/b&gt;");
    expect(escapeHtml("plain")).toBe("plain");
  });
});
