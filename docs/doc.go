// Package docs holds the project's documentation (the markdown pages beside this file); it
// has no code, only a test that checks the README's and the pages' relative links.
package docs
