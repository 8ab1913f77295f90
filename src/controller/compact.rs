//! What the controller keeps compact: JSON text compressed (LZ4 block format, its size
//! prepended) against a dictionary, unpacked when read. The one way the caches keep what a
//! reconcile reads rarely: the cached ServiceSets' spec and status ([`super::cached`]), the
//! Flux objects ([`super::cache`]) and the replies of the controller's writes
//! ([`super::written`]).
//!
//! Objects of a kind look alike (the same keys, labels, conditions; most written from one
//! template), so each text compresses well against one of them: about a tenth of the text,
//! decompressed in a few microseconds.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;

/// The most of a first text a learned dictionary keeps (LZ4 looks back at most 64 KiB; the
/// objects compressed are a few KiB).
const DICTIONARY_MAX: usize = 16 * 1024;

/// Compressed JSON text; only the [`Packer`] that made it reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct Packed(Box<[u8]>);

impl Packed {
    /// Its size in bytes.
    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.0.len()
    }
}

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packed({} bytes)", self.0.len())
    }
}

/// What texts are compressed against: text given up front, or the first text packed.
enum Dictionary {
    Fixed(&'static [u8]),
    FirstText(OnceLock<Box<[u8]>>),
}

/// Packs JSON texts of one kind of object, and unpacks them.
pub struct Packer {
    dictionary: Dictionary,
}

impl Default for Packer {
    /// A packer whose dictionary is the first text it packs.
    fn default() -> Packer {
        Packer {
            dictionary: Dictionary::FirstText(OnceLock::new()),
        }
    }
}

impl Packer {
    /// A packer with this dictionary (any text works, the closer to the texts the better).
    pub const fn with_dictionary(dictionary: &'static [u8]) -> Packer {
        Packer {
            dictionary: Dictionary::Fixed(dictionary),
        }
    }

    fn dictionary(&self) -> &[u8] {
        match &self.dictionary {
            Dictionary::Fixed(d) => d,
            Dictionary::FirstText(d) => d.get().map_or(&[], |d| d),
        }
    }

    /// `text` compressed.
    pub fn pack(&self, text: &[u8]) -> Packed {
        let dictionary = match &self.dictionary {
            Dictionary::Fixed(d) => d,
            Dictionary::FirstText(d) => {
                &**d.get_or_init(|| text[..text.len().min(DICTIONARY_MAX)].into())
            }
        };
        Packed(
            lz4_flex::block::compress_prepend_size_with_dict(text, dictionary).into_boxed_slice(),
        )
    }

    /// The text [`Packer::pack`] compressed.
    pub fn text(&self, packed: &Packed) -> Result<Vec<u8>, String> {
        lz4_flex::block::decompress_size_prepended_with_dict(&packed.0, self.dictionary())
            .map_err(|e| format!("packed text does not unpack: {e}"))
    }

    /// The text [`Packer::pack`] compressed, parsed.
    pub fn unpack<T: DeserializeOwned>(&self, packed: &Packed) -> Result<T, String> {
        serde_json::from_slice(&self.text(packed)?)
            .map_err(|e| format!("packed text is not what was expected: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn text(i: usize) -> Vec<u8> {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": format!("cluster-{i:05}-ingress-nginx"), "namespace": "ns",
                "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x",
                    "uid": format!("uid-{i}")}]},
            "spec": {"interval": "1m"}})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn texts_read_back_and_similar_ones_take_a_fraction() {
        let p = Packer::default();
        let packed: Vec<Packed> = (0..100).map(|i| p.pack(&text(i))).collect();
        for (i, z) in packed.iter().enumerate() {
            assert_eq!(p.text(z).unwrap(), text(i));
            let v: Value = p.unpack(z).unwrap();
            assert_eq!(v, serde_json::from_slice::<Value>(&text(i)).unwrap());
        }
        // Objects alike compress against the first: a fraction of their text.
        assert!(
            packed[99].size() * 3 < text(99).len(),
            "{} of {}",
            packed[99].size(),
            text(99).len()
        );
    }

    #[test]
    fn a_fixed_dictionary_packs_and_garbage_is_an_error_not_a_panic() {
        static P: Packer = Packer::with_dictionary(br#"{"spec":{"interval":"1m"}}"#);
        let z = P.pack(&text(1));
        assert_eq!(P.text(&z).unwrap(), text(1));
        assert!(z.size() < text(1).len());
        let garbage = Packed(b"not packed".to_vec().into_boxed_slice());
        assert!(P.text(&garbage).is_err());
        assert!(P.unpack::<Value>(&garbage).is_err());
        // Packed by another packer (another dictionary): an error, or other text; never a panic.
        let other = Packer::default().pack(&text(2));
        let _ = P.unpack::<Value>(&other);
    }
}
