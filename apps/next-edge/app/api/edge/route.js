import { gate } from "../../../lib/receiver.js";

export const runtime = "edge";
export const dynamic = "force-dynamic";

const receiver = gate();
const source = (request) => new URL(request.url).searchParams.get("source") ?? "billing";

export const POST = (request) => receiver.handle(request, source(request));
export const GET = (request) => receiver.handle(request, source(request));
