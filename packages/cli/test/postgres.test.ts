import { describeCommands } from "./support/command-suite.js";
import { createPostgresDatabase } from "./support/databases.js";

describeCommands("PostgreSQL", createPostgresDatabase);
