//go:build tools

package main

import (
	_ "github.com/dop251/goja"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/gorilla/websocket"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/pressly/goose/v3"
	_ "github.com/riverqueue/river"
	_ "github.com/riverqueue/river/riverdriver/riverpgxv5"
)
