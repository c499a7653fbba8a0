/** Markup that would run script (or add elements) if the portal rendered it as HTML. */
export const HOSTILE = {
  /** A description, a filter value, an actor name and event data. */
  text: `"><script>alert("text")</script><img src=x onerror=alert("img")>`,
  /** A query string on an endpoint URL. */
  query: `?q="><script>alert("url")</script><img src=x onerror=alert(2)>`,
  /** What a failing receiver answers (as text/html). */
  response: `<img src=x onerror="alert('receiver')"><script>alert("receiver")</script> receiver error`,
};
