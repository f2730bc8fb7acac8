// Command ferretdb runs an embedded FerretDB (MongoDB wire protocol over SQLite, or
// over PostgreSQL with -handler postgresql) for development, tests and `campus db
// --postgres`. The upstream cmd/ferretdb panics when built from the module proxy (it
// expects a generated version file), so we embed the library.
//
// `ferretdb index [flags]` only makes the indexes FerretDB's queries can use (indexes.go) and
// exits; the server makes them too, for what exists when it starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "index" {
		if err := runIndex(os.Args[2:]); err != nil {
			fatal(err)
		}
		return
	}
	serve()
}

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ExitOnError)
}

func serve() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("sqlite-dir", "./.data/db", "directory holding the SQLite files")
	synchronous := flag.String("sqlite-synchronous", "normal", "SQLite's synchronous setting: normal or full (see sqliteURL)")
	handler := flag.String("handler", "sqlite", "backend handler: sqlite or postgresql")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL URL for the postgresql handler (default: $FERRETDB_POSTGRESQL_URL)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	watchStdin := flag.Bool("exit-on-stdin-close", false, "stop when standard input closes (the parent died)")
	flag.Parse()
	// The URL may hold a password: the parent passes it in the environment, which other
	// users cannot read, rather than on the command line, which they can (ps).
	if *pgURL == "" {
		*pgURL = os.Getenv("FERRETDB_POSTGRESQL_URL")
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fatal(err)
	}
	logger := slog.New(lazyAttrs{next: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})})

	if *handler == "sqlite" {
		if err := os.MkdirAll(*dir, 0o700); err != nil {
			fatal(err)
		}
		if *synchronous != "normal" && *synchronous != "full" {
			fatal(fmt.Errorf("-sqlite-synchronous must be normal or full, not %q", *synchronous))
		}
	}

	// Before FerretDB opens the files: what earlier runs stored is indexed before the first query.
	made, err := ensureIndexes(context.Background(), indexOptions{handler: *handler, sqliteDir: *dir, postgresqlURL: *pgURL})
	if err != nil {
		logger.Warn("could not make the indexes FerretDB can use", slog.String("error", err.Error()))
	}
	for _, name := range made {
		logger.Info("index created", slog.String("name", name))
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       *handler,
		SQLiteURL:     sqliteURL(*dir, *synchronous),
		PostgreSQLURL: withCustomPlans(*pgURL),
	})
	if err != nil {
		fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}

	// The parent waits for this line before connecting.
	fmt.Printf("ready %s\n", f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
	os.Exit(1)
}

// withCustomPlans makes PostgreSQL plan every FerretDB statement for its parameters. FerretDB
// prepares `... WHERE _jsonb->$1 @> $2`, with the field name a parameter: a generic plan, which
// PostgreSQL settles on after five runs when the table is still small, cannot use an index on
// `(_jsonb->'_id')` and scans ever more rows as the table grows (measured: 2 ms at 4,000 rows,
// 15 ms at 20,000 against 2 ms with custom plans). The URL's own setting wins.
func withCustomPlans(pgURL string) string {
	u, err := url.Parse(pgURL)
	if pgURL == "" || err != nil {
		return pgURL
	}
	q := u.Query()
	if q.Get("plan_cache_mode") == "" {
		q.Set("plan_cache_mode", "force_custom_plan")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// sqliteURL is FerretDB's SQLite URL with the `synchronous` setting. FerretDB runs SQLite in WAL
// mode; SQLite's default there, `full`, syncs the log to disk at every commit, so a commit
// survives even a power loss, at the price of one fsync per write while writers wait their turn.
// `normal` syncs at checkpoints only: a commit is in the log, in the operating system's cache,
// when it returns, so a crash of the service or of this process loses nothing, and the database
// is never corrupted; a crash of the machine (power loss, kernel panic) can lose the commits
// since the last checkpoint (README "Configuration", SQLITE_SYNCHRONOUS).
//
// `temp_store(memory)` keeps SQLite's temporary files in memory, the statement journal among them:
// a statement that may fail halfway (every insert, since `_id` is unique) journals the pages it
// changes so that it can be undone alone, and SQLite writes that journal to a file of its own
// once it passes 64 KiB. An insert of a few documents with random `_id`s changes that many pages,
// so every insert created, wrote and unlinked a file under /var/tmp (seen with strace during the
// refresh bench: about 80 a second). In memory, FerretDB's CPU per refresh fell by about a third
// (README "Benchmarks"). The journal is at most the pages one statement changes.
func sqliteURL(dir, synchronous string) string {
	return "file:" + dir + "/?_pragma=synchronous(" + synchronous + ")&_pragma=temp_store(memory)"
}
