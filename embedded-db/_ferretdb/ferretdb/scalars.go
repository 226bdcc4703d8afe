// Added for the embedded gateway (see embedded-db/README.md): embedded-db's main is outside
// FerretDB's module, so it cannot import the internal package that reads the declaration.

package ferretdb

import "github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"

// DeclareScalarFields checks the store's declaration of scalar fields (JSON, collection →
// field → type) and gives it to the SQLite backend; call it before Run.
func DeclareScalarFields(text string) error {
	return metadata.DeclareScalarFields(text)
}
