import { describeCheckCommand } from "./support/check-suite.js";
import { describeCommands } from "./support/command-suite.js";
import { createSqliteDatabase } from "./support/databases.js";
import { describeEditCommands } from "./support/edit-suite.js";

describeCommands("SQLite", createSqliteDatabase);
describeEditCommands("SQLite", createSqliteDatabase);
describeCheckCommand("SQLite", createSqliteDatabase);
