// Package geoiptest builds small MaxMind-format databases for tests with mmdbwriter: edge ships no
// database, so every test that needs one writes its own. Only tests import it.
package geoiptest
