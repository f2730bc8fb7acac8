package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // FerretDB's own SQLite driver, registered as "sqlite"
)

// FerretDB 1.24 keeps each collection in a table of one JSON column, and indexes it in a shape its
// own queries cannot use (FerretDB issues #4209 and #4646; its maintainers fix it only in v2):
//
//   - over SQLite it looks a document up, updates it and deletes it by `_ferretdb_sjson->'$._id' = ?`,
//     but builds its unique `_id` index on `_ferretdb_sjson->"_id"`; SQLite uses an expression index
//     only for the very same expression, so every one of those statements scans the table;
//   - over PostgreSQL it pushes an equality filter down as `_jsonb->'field' @> value`, which its
//     btree indexes on `(_jsonb->'field')` cannot serve (its update and delete by `_id` use
//     `_jsonb->'_id' = value`, which its btree does serve).
//
// The indexes below are ones those statements can use. Over PostgreSQL they are added beside
// FerretDB's (it does not know them: they are not in its metadata, so `listIndexes` does not show
// them); they go when their table goes (a dropped collection or database). Over SQLite FerretDB
// pushes down nothing but `_id`, and its own unique `_id` index is remade on the expression its
// queries use (ensureSQLiteIDIndex).

// equalityFields are the fields besides `_id` that the service filters on by equality (each a
// top-level string field), per collection: the filters FerretDB over PostgreSQL pushes down.
var equalityFields = map[string][]string{
	// src/data/accounts/oauth-records.ts: what a grant issued (revocation, last use), an account's or a
	// client's grants and sessions.
	"oauth_records":      {"grantId", "accountId", "clientId"},
	"oauth_interactions": {"grantId", "accountId", "clientId"},
	// src/data/accounts/store.ts: sign-in and sign-up look an account, and its student, up by email.
	"accounts":    {"email"},
	"students":    {"email"},
	"email_codes": {"email"},
	// src/data/keys/store.ts, src/data/accounts/store.ts: a person's keys and apps in the console.
	"api_keys":      {"ownerAccountId", "prefix"},
	"oauth_clients": {"ownerAccountId"},
	// src/data/school/: a batch's journal.
	"audit_entries": {"batchId"},
}

// indexOptions say where FerretDB keeps its data, as the server mode's flags do.
type indexOptions struct {
	handler       string
	sqliteDir     string
	postgresqlURL string
	// database limits the work to one database (a SQLite file, a PostgreSQL schema); "" means all.
	database string
}

// runIndex is the `index` subcommand: it makes the missing indexes and prints one line per index made.
func runIndex(args []string) error {
	fs := newFlagSet("index")
	handler := fs.String("handler", "sqlite", "backend handler: sqlite or postgresql")
	dir := fs.String("sqlite-dir", "./.data/db", "directory holding the SQLite files")
	pgURL := fs.String("postgresql-url", "", "PostgreSQL URL for the postgresql handler (default: $FERRETDB_POSTGRESQL_URL)")
	database := fs.String("database", "", "only this database (default: every database FerretDB holds there)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pgURL == "" {
		*pgURL = os.Getenv("FERRETDB_POSTGRESQL_URL")
	}
	made, err := ensureIndexes(context.Background(), indexOptions{handler: *handler, sqliteDir: *dir, postgresqlURL: *pgURL, database: *database})
	for _, name := range made {
		fmt.Printf("created %s\n", name)
	}
	return err
}

// ensureIndexes makes the indexes that are missing and returns the names of those it made.
func ensureIndexes(ctx context.Context, o indexOptions) ([]string, error) {
	switch o.handler {
	case "sqlite":
		return ensureSQLiteIndexes(ctx, o.sqliteDir, o.database)
	case "postgresql":
		return ensurePostgreSQLIndexes(ctx, o.postgresqlURL, o.database)
	default:
		return nil, fmt.Errorf("unknown handler %q", o.handler)
	}
}

// ensureSQLiteIndexes makes the `_id` index of every collection of every database file (one per
// database) one that FerretDB's queries can use.
func ensureSQLiteIndexes(ctx context.Context, dir, database string) ([]string, error) {
	pattern := "*.sqlite"
	if database != "" {
		pattern = database + ".sqlite"
	}
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var made []string
	for _, file := range files {
		names, err := ensureSQLiteFileIndexes(ctx, file)
		made = append(made, names...)
		if err != nil {
			return made, fmt.Errorf("%s: %w", file, err)
		}
	}
	return made, nil
}

func ensureSQLiteFileIndexes(ctx context.Context, file string) ([]string, error) {
	// mode=rw: a database dropped meanwhile is not created again. The busy timeout is FerretDB's,
	// whose process writes to the same file.
	dsn := (&url.URL{Scheme: "file", Opaque: file, RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()

	tables, err := queryStrings(ctx, db, `SELECT table_name FROM _ferretdb_collections ORDER BY table_name`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil // a database FerretDB has not written a collection to yet
		}
		return nil, err
	}
	var made []string
	for _, table := range tables {
		replaced, err := ensureSQLiteIDIndex(ctx, db, table)
		if err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue // the collection was dropped meanwhile
			}
			return made, err
		}
		if replaced {
			made = append(made, table+sqliteIDIndexSuffix)
		}
	}
	return made, nil
}

// sqliteIDIndexSuffix names FerretDB's unique `_id` index of a table: "<table>_" and the index's
// own name, `_id_` (the registry's indexesCreate in FerretDB's sqlite backend).
const sqliteIDIndexSuffix = "__id_"

// sqliteIDExpr is the expression FerretDB's own lookups, updates and deletes by `_id` use
// (metadata.IDColumn of its sqlite backend).
const sqliteIDExpr = "_ferretdb_sjson->'$._id'"

// ensureSQLiteIDIndex remakes FerretDB's unique `_id` index of a table on sqliteIDExpr; it
// reports whether it did. FerretDB builds that index on `_ferretdb_sjson->"_id"`: the same values
// (a text label is the path '$.<label>'), so it enforces the same uniqueness, but SQLite serves a
// query with an expression index only when the expressions are written the same. Remade on the
// query's expression, the one index both refuses a second `_id` (the unique-constraint error that
// FerretDB turns into E11000) and serves every lookup by `_id`, where earlier launchers kept
// FerretDB's and added one of theirs (`<table>_campus__id`, dropped here): every insert kept two
// indexes on the same values, a random page of each for a random key, and a refresh grant
// writes two such keys (README "Benchmarks"). FerretDB keeps its indexes' definitions in its
// own metadata, not in SQLite's, so it sees no change; the drop and the new index are one
// transaction, so no statement ever finds the table without a unique `_id` index.
func ensureSQLiteIDIndex(ctx context.Context, db *sql.DB, table string) (bool, error) {
	name := table + sqliteIDIndexSuffix
	legacy := table + "_campus__id"
	var definition string
	err := db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, name).Scan(&definition)
	if err != nil && err != sql.ErrNoRows {
		return false, err
	}
	var legacyCount int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, legacy).Scan(&legacyCount); err != nil {
		return false, err
	}
	if strings.Contains(definition, sqliteIDExpr) && legacyCount == 0 {
		return false, nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	for _, q := range []string{
		fmt.Sprintf(`DROP INDEX IF EXISTS %s`, sqliteIdent(legacy)),
		fmt.Sprintf(`DROP INDEX IF EXISTS %s`, sqliteIdent(name)),
		fmt.Sprintf(`CREATE UNIQUE INDEX %s ON %s (%s)`, sqliteIdent(name), sqliteIdent(table), sqliteIDExpr),
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

func sqliteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ensurePostgreSQLIndexes makes a GIN `jsonb_path_ops` index on `(_jsonb->'field')` for `_id` and
// the equality fields of every collection, in every schema FerretDB keeps a database in.
func ensurePostgreSQLIndexes(ctx context.Context, pgURL, database string) ([]string, error) {
	if pgURL == "" {
		return nil, fmt.Errorf("no PostgreSQL URL: pass -postgresql-url or set FERRETDB_POSTGRESQL_URL")
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)

	schemas, err := pgStrings(ctx, conn,
		`SELECT table_schema FROM information_schema.tables
		 WHERE table_name = '_ferretdb_database_metadata' AND ($1 = '' OR table_schema = $1)
		 ORDER BY table_schema`, database)
	if err != nil {
		return nil, err
	}
	var made []string
	for _, schema := range schemas {
		type collection struct{ name, table string }
		rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT _jsonb->>'_id', _jsonb->>'table' FROM %s ORDER BY 2`,
			pgx.Identifier{schema, "_ferretdb_database_metadata"}.Sanitize()))
		if err != nil {
			return made, err
		}
		collections, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (collection, error) {
			var c collection
			err := row.Scan(&c.name, &c.table)
			return c, err
		})
		if err != nil {
			return made, err
		}
		for _, c := range collections {
			for _, field := range append([]string{"_id"}, equalityFields[c.name]...) {
				name := pgIndexName(c.table, field)
				var exists bool
				if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgx.Identifier{schema, name}.Sanitize()).Scan(&exists); err != nil {
					return made, err
				}
				if exists {
					continue
				}
				q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s USING gin ((_jsonb->%s) jsonb_path_ops)`,
					pgx.Identifier{name}.Sanitize(), pgx.Identifier{schema, c.table}.Sanitize(), pgLiteral(field))
				if _, err := conn.Exec(ctx, q); err != nil {
					if strings.Contains(err.Error(), "does not exist") {
						continue // the collection was dropped meanwhile
					}
					return made, err
				}
				made = append(made, schema+"."+name)
			}
		}
	}
	return made, nil
}

// pgIndexName is "<table>_campus_<field>", shortened with a hash where PostgreSQL's 63 bytes
// would cut it (index names are unique per schema; FerretDB's own end in a hash of eight digits).
func pgIndexName(table, field string) string {
	name := table + "_campus_" + field
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:50] + "_" + hex.EncodeToString(sum[:6])
}

func pgLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func queryStrings(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func pgStrings(ctx context.Context, conn *pgx.Conn, q string, args ...any) ([]string, error) {
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
