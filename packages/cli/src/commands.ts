import type { Command } from "./command.js";
import { catalogCommands } from "./commands/catalog.js";
import { checkCommands } from "./commands/check.js";
import { deadLetterCommands } from "./commands/dead-letters.js";
import { endpointEditCommands } from "./commands/endpoint-edit.js";
import { endpointStateCommands } from "./commands/endpoint-state.js";
import { endpointCommands } from "./commands/endpoints.js";
import { keyCommands } from "./commands/keys.js";
import { messageCommands } from "./commands/messages.js";
import { migrateCommands } from "./commands/migrate.js";
import { pruneCommands } from "./commands/prune.js";
import { replayCommands } from "./commands/replay.js";
import { sendTestCommands } from "./commands/send-test.js";
import { statsCommands } from "./commands/stats.js";
import { tailCommands } from "./commands/tail.js";

/** Every `postel` command, in the order `postel --help` lists them. */
export const COMMANDS: readonly Command[] = [
  ...migrateCommands,
  ...endpointCommands,
  ...endpointEditCommands,
  ...endpointStateCommands,
  ...sendTestCommands,
  ...messageCommands,
  ...deadLetterCommands,
  ...keyCommands,
  ...replayCommands,
  ...pruneCommands,
  ...statsCommands,
  ...checkCommands,
  ...tailCommands,
  ...catalogCommands,
];

/** Words that take a subcommand (`postel endpoints list`). */
export const GROUPS = new Set(COMMANDS.filter((c) => c.name.includes(" ")).map((c) => c.name.split(" ")[0]!));
