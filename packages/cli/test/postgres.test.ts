import { describeCheckCommand } from "./support/check-suite.js";
import { describeCommands } from "./support/command-suite.js";
import { createPostgresDatabase } from "./support/databases.js";
import { describeEditCommands } from "./support/edit-suite.js";

describeCommands("PostgreSQL", createPostgresDatabase);
describeEditCommands("PostgreSQL", createPostgresDatabase);
describeCheckCommand("PostgreSQL", createPostgresDatabase);
