import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { html, raw } from "./html.js";

describe("html template", () => {
  it("escapes interpolated text, so user input cannot become markup", () => {
    const name = `<script>alert("x")</script> & 'co'`;
    assert.equal(
      html`<td>${name}</td>`.value,
      "<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</td>",
    );
  });

  it("keeps nested html and raw markup as they are, and renders lists and empty values", () => {
    const rows = ["a<b", "c"].map((text) => html`<li>${text}</li>`);
    assert.equal(
      html`<ul>${rows}</ul>${null}${undefined}${false}${raw("<hr>")}${0}`.value,
      "<ul><li>a&lt;b</li><li>c</li></ul><hr>0",
    );
  });
});
