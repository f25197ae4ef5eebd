package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/backtestd/backtestd/internal/apperr"
)

// argon2id settings: OWASP's recommended minimum (19 MiB, 2 passes, 1 lane), about 30 ms
// a check on one core, so a stolen hash costs an attacker as much per guess.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16

	minPassword = 8
	maxPassword = 1024
)

var b64 = base64.RawStdEncoding

// hashPassword returns the PHC string of password: $argon2id$v=19$m=…,t=…,p=…$salt$key.
func hashPassword(password string) (string, error) {
	if err := checkPasswordRules(password); err != nil {
		return "", err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

func checkPasswordRules(p string) error {
	n := utf8.RuneCountInString(p)
	if n < minPassword {
		return apperr.Invalid("Password too short: at least %d characters", minPassword)
	}
	if len(p) > maxPassword || !utf8.ValidString(p) {
		return apperr.Invalid("Password must be valid UTF-8 of at most %d bytes", maxPassword)
	}
	return nil
}

// passwordMatches checks password against a PHC string made by hashPassword, with the
// parameters the string records (so stronger settings later still verify old hashes).
func passwordMatches(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<22 || t > 64 {
		return false
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when a sign-in names no such user, so that the answer takes
// as long as for a wrong password and does not tell which names exist.
// It is made on first use, so that programs that never check a password (the runner
// processes are this program too) do not pay for it at start.
var dummyHash = sync.OnceValue(func() string {
	h, err := hashPassword("not-a-password-anyone-has")
	if err != nil {
		panic(err)
	}
	return h
})
