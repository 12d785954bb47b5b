// Package configs holds the test configs kscale ships (density, load,
// apilatency), their object templates and overrides. The Go files here only
// test them: every config compiles at the sizes it is meant for, and the
// compiled result matches a checked-in golden file.
package configs
