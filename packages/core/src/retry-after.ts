const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY = "(?:mon|tue|wed|thu|fri|sat|sun)";
const LONG_DAY = "(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)";
const MONTH = "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)";
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";

// RFC 9110 §5.6.7: the preferred IMF-fixdate and the two obsolete forms recipients must accept.
// Parsed by hand because Date.parse reads the zone-less asctime form in the host's local time.
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, "i");
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, "i");
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, "i");

const DELTA_SECONDS = /^\d+$/;

/**
 * Milliseconds a `Retry-After` header asks to wait, measured from `now` (epoch ms); a date in the
 * past gives 0. Returns `undefined` when the header is absent or malformed.
 * @example
 * parseRetryAfter("120", now); // 120000
 * parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now); // ms until then, or 0
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (DELTA_SECONDS.test(text)) {
    const ms = Number(text) * 1_000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const at = parseHttpDate(text, now);
  return at === undefined ? undefined : Math.max(0, at - now);
}

/** Epoch ms of an HTTP-date in any of its three forms, or `undefined` when it is not one. */
export function parseHttpDate(text: string, now: number): number | undefined {
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, day, month, year, hh, mm, ss] = match;
    return toEpoch(Number(year), month!, Number(day), hh!, mm!, ss!);
  }
  match = RFC_850.exec(text);
  if (match) {
    const [, day, month, yy, hh, mm, ss] = match;
    return toEpoch(fullYear(Number(yy), now), month!, Number(day), hh!, mm!, ss!);
  }
  match = ASCTIME.exec(text);
  if (match) {
    const [, month, day, hh, mm, ss, year] = match;
    return toEpoch(Number(year), month!, Number(day!.trim()), hh!, mm!, ss!);
  }
  return undefined;
}

// RFC 9110: a two-digit year more than 50 years in the future means the most recent past such year.
function fullYear(twoDigits: number, now: number): number {
  const currentYear = new Date(now).getUTCFullYear();
  const year = Math.floor(currentYear / 100) * 100 + twoDigits;
  return year > currentYear + 50 ? year - 100 : year;
}

function toEpoch(
  year: number,
  monthName: string,
  day: number,
  hh: string,
  mm: string,
  ss: string,
): number | undefined {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  const [hours, minutes, seconds] = [Number(hh), Number(mm), Number(ss)];
  // 60 seconds is a leap second; Date.UTC rolls it into the next minute, which is close enough.
  if (hours > 23 || minutes > 59 || seconds > 60) return undefined;
  const epoch = Date.UTC(year, month, day, hours, minutes, seconds);
  // Reject impossible days such as 31 Feb rather than letting Date.UTC roll them into March.
  const date = new Date(epoch);
  if (date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return epoch;
}
