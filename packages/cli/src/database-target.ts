/** Where the CLI reads and writes: chosen by `--db` or `POSTEL_DATABASE_URL`. */
export interface DatabaseTarget {
  kind: "postgres" | "sqlite";
  /** What the storage is given (a `file:` URL for a bare path). */
  url: string;
  /** The same with any password replaced by `***`: the only form ever printed. */
  display: string;
  /** The local SQLite file, when there is one. */
  file: string | null;
  /** The password in the URL, to cut out of any message that might repeat it. */
  password: string | null;
}
