// Command ferretdb runs an embedded FerretDB (MongoDB wire protocol over SQLite, or
// over PostgreSQL with -handler postgresql) for development, tests and `campus db
// --postgres`. The upstream cmd/ferretdb panics when built from the module proxy (it
// expects a generated version file), so we embed the library.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("sqlite-dir", "./.data/db", "directory holding the SQLite files")
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
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if *handler == "sqlite" {
		if err := os.MkdirAll(*dir, 0o700); err != nil {
			fatal(err)
		}
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listen},
		Logger:        logger,
		Handler:       *handler,
		SQLiteURL:     "file:" + *dir + "/",
		PostgreSQLURL: *pgURL,
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
