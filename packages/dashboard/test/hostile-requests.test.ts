import { serve } from "@hono/node-server";
import { InMemoryStorage, Postel } from "@postel/core";
import type { MountableHandler } from "@postel/web-kit";
import { type Frameworks, frameworkMounts, runMountHardening } from "@postel/web-kit/testing";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll } from "vitest";
import { createDashboard } from "../src/index.js";
import { expressDashboard } from "../src/mounts/express.js";
import { fastifyDashboard } from "../src/mounts/fastify.js";
import { honoDashboard } from "../src/mounts/hono.js";
import { nextDashboard } from "../src/mounts/next.js";

const postel = Postel({ outbound: { storage: InMemoryStorage() } });
afterAll(() => postel.close());

/** The four one-line mounts, each on a real server as an app would run it. */
const mounts = frameworkMounts(
  { express, Fastify, Hono, serve } as unknown as Frameworks,
  { express: expressDashboard, fastify: fastifyDashboard, hono: honoDashboard, next: nextDashboard },
  "/postel",
);

runMountHardening({
  surface: "dashboard",
  basePath: "/postel",
  page: "/",
  create: (identify, onError): MountableHandler =>
    createDashboard({ postel, basePath: "/postel", authorize: identify, onError }),
  mounts,
});
