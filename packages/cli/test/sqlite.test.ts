import { describeCommands } from "./support/command-suite.js";
import { createSqliteDatabase } from "./support/databases.js";

describeCommands("SQLite", createSqliteDatabase);
