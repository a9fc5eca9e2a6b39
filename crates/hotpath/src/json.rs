//! JSON encoding of request bodies: `serde_json::to_vec` instantiated here, at full
//! optimisation, for the `Value` every provider builds (string escaping of a long
//! conversation is most of a request's encoding time).

use serde_json::Value;

/// The compact JSON text of `value`.
pub fn to_vec(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(value)
}
