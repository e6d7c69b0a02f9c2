// Package badinput holds hostile-input tests for Cairn's S3 front end, run against the real
// server over HTTP and raw TCP: bad signatures, cut or lying bodies, malformed documents, hostile
// names and headers, unsupported operations and a full disk. Every test asserts the exact S3
// error code and HTTP status and that nothing already stored changed. The package has no code
// outside its tests.
package badinput
