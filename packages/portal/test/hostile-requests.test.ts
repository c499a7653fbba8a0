import { serve } from "@hono/node-server";
import { InMemoryStorage, Postel } from "@postel/core";
import { type Frameworks, frameworkMounts, runMountHardening } from "@postel/web-kit/testing";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll } from "vitest";
import { createPortal } from "../src/index.js";
import { expressPortal } from "../src/mounts/express.js";
import { fastifyPortal } from "../src/mounts/fastify.js";
import { honoPortal } from "../src/mounts/hono.js";
import { nextPortal } from "../src/mounts/next.js";

const postel = Postel({ outbound: { storage: InMemoryStorage() } });
afterAll(() => postel.close());

runMountHardening({
  surface: "portal",
  basePath: "/webhooks",
  page: "/api/endpoints",
  create: (identify, onError) =>
    createPortal({
      postel,
      basePath: "/webhooks",
      authenticate: async (request) =>
        (await identify(request)) ? { tenantId: "acme", actor: "ada" } : null,
      onError,
    }),
  mounts: frameworkMounts(
    { express, Fastify, Hono, serve } as unknown as Frameworks,
    { express: expressPortal, fastify: fastifyPortal, hono: honoPortal, next: nextPortal },
    "/webhooks",
  ),
});
