// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package sjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// stringType represents BSON UTF-8 string type.
type stringType string

// sjsontype implements sjsontype interface.
func (str *stringType) sjsontype() {}

// UnmarshalJSON implements json.Unmarshaler interface.
func (str *stringType) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		panic("null data")
	}

	// Patched for the embedded database: json.Unmarshal, which also refuses trailing data,
	// instead of a Decoder per value (most of a document read's CPU).
	// A string without escapes, control characters or invalid UTF-8 (most stored strings)
	// is its bytes between the quotes, which is what the decoder would return.
	if plainString(data) {
		*str = stringType(data[1 : len(data)-1])
		return nil
	}

	var o string
	if err := json.Unmarshal(data, &o); err != nil {
		return lazyerrors.Error(err)
	}

	*str = stringType(o)

	return nil
}

// MarshalJSON implements sjsontype interface.
func (str *stringType) MarshalJSON() ([]byte, error) {
	res, err := json.Marshal(string(*str))
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return res, nil
}

// check interfaces
var (
	_ sjsontype = (*stringType)(nil)
)

// plainString reports whether data is a JSON string literal the decoder would return as its
// inner bytes unchanged (patched for the embedded database).
func plainString(data []byte) bool {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return false
	}

	inner := data[1 : len(data)-1]
	for _, b := range inner {
		if b == '\\' || b == '"' || b < 0x20 {
			return false
		}
	}

	return utf8.Valid(inner)
}
