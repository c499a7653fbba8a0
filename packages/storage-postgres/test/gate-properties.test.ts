import { runGateProperties } from "@postel/core/testing";
import { PostgresDedupStore } from "../src/index.js";
import { migratedDatabase } from "./support/database.js";

const db = migratedDatabase();

runGateProperties({ name: "postgres", dedup: () => PostgresDedupStore({ sql: db.sql }) });
