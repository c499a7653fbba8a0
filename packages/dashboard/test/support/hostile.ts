/** Inputs that would run script if the dashboard rendered them as markup. */
export const HOSTILE = {
  description: `<script>alert("description")</script>"><img src=x onerror=alert("img")>`,
  metadata: { note: `</pre><script>alert("metadata")</script>`, "<b>key</b>": `' onmouseover='alert(1)` },
  payload: { comment: `<img src=x onerror=alert("payload")>`, html: "<svg onload=alert('svg')>" },
  tenant: `t"><script>alert("tenant")</script>`,
  snippet: `<script>alert("snippet")</script>`,
};
