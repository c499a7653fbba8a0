import { gate } from "./lib/receiver.js";

const receiver = gate();

/** Webhooks answered by middleware (Next runs it on the edge runtime): /hooks?source=<name>. */
export function middleware(request) {
  return receiver.handle(request, request.nextUrl.searchParams.get("source") ?? "billing");
}

export const config = { matcher: "/hooks" };
