package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/backtestd/backtestd/internal/pgcluster"
)

// pgctl stops private clusters: `backtestd pgctl stop DIR...` (used by `make pg-stop`).
func pgctl(ctx context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	if len(args) < 1 || args[0] != "stop" {
		return errors.New("usage: backtestd pgctl stop DIR [DIR]")
	}
	for _, dir := range args[1:] {
		if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
			continue
		}
		c, err := pgcluster.New(dir)
		if err != nil {
			return err
		}
		if err := c.Stop(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "stopped %s\n", dir)
	}
	return nil
}
