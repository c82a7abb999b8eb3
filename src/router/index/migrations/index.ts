// The ordered Postgres migrations. Imported as text so `bun build --compile` embeds them;
// a test checks that every .sql file in this folder is listed here.
import init from "./0001_init.sql" with { type: "text" };
import docTsv from "./0002_doc_tsv.sql" with { type: "text" };
import links from "./0003_links.sql" with { type: "text" };
import searchScale from "./0004_search_scale.sql" with { type: "text" };
import salientWords from "./0005_salient_words.sql" with { type: "text" };
import titleWords from "./0006_title_words.sql" with { type: "text" };
import salientBytes from "./0007_salient_bytes.sql" with { type: "text" };

export interface Migration {
  version: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: "0001_init", sql: init },
  { version: "0002_doc_tsv", sql: docTsv },
  { version: "0003_links", sql: links },
  { version: "0004_search_scale", sql: searchScale },
  { version: "0005_salient_words", sql: salientWords },
  { version: "0006_title_words", sql: titleWords },
  { version: "0007_salient_bytes", sql: salientBytes },
];
