/** Inputs that would run script if the dashboard rendered them as markup. */
export const HOSTILE = {
  description: `<script>alert("description")</script>"><img src=x onerror=alert("img")>`,
  metadata: { note: `</pre><script>alert("metadata")</script>`, "<b>key</b>": `' onmouseover='alert(1)` },
  payload: { comment: `<img src=x onerror=alert("payload")>`, html: "<svg onload=alert('svg')>" },
  tenant: `t"><script>alert("tenant")</script>`,
  snippet: `<script>alert("snippet")</script>`,
  /** A receiver's answer with markup and a terminal escape (set the window title, then BEL). */
  response: "<img src=x onerror=alert(1)>\u001b]0;title\u0007",
};

/** `HOSTILE.response` as the dashboard must show it: markup escaped, control characters as their pictures. */
export const HOSTILE_RESPONSE_SHOWN = "&lt;img src=x onerror=alert(1)&gt;␛]0;title␇";
