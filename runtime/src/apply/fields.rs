//! Reading and writing apply configurations without serde's derives.
//!
//! A derived `Deserialize` is the largest piece of code an apply
//! configuration would expand to, and it is only needed to read one back
//! (extract, or a configuration kept in a file). Generated configurations
//! instead implement `Deserialize` in one line through
//! [`deserialize_config`], and read their fields from [`Fields`]: a field is
//! one call, and the serde machinery is compiled once per field type.
//! `Serialize` likewise writes through [`ConfigWriter`], so a generated
//! crate runs no serde derive for its configurations.

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{self, SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The members of a JSON object a configuration is read from.
#[derive(Debug, Default)]
pub struct Fields(Map<String, Value>);

impl Fields {
    /// The member `key`, taken out: `None` when it is absent or `null`,
    /// as a derived `Option` field with `#[serde(default)]` reads it.
    ///
    /// # Errors
    ///
    /// The member does not deserialize into `T`; the message names it.
    pub fn take<T: DeserializeOwned>(&mut self, key: &str) -> Result<Option<T>, serde_json::Error> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => serde_json::from_value(value)
                .map(Some)
                .map_err(|e| <serde_json::Error as de::Error>::custom(format_args!("field `{key}`: {e}"))),
        }
    }

    /// A `#[serde(flatten)]` field: the members no named field took, read
    /// as `T`, or `None` when they are not one (serde's flattened `Option`).
    pub fn rest<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(Value::Object(self.0.clone())).ok()
    }

    /// A flattened externally tagged enum: the first member no named field
    /// took that reads as `T` on its own (`{"git": {..}}`), as serde's
    /// flatten hands an enum the member named as one of its variants; the
    /// other members (a second flattened field's) are not the enum's.
    pub fn rest_variant<T: DeserializeOwned>(&self) -> Option<T> {
        self.0.iter().find_map(|(key, value)| {
            let mut one = Map::new();
            one.insert(key.clone(), value.clone());
            serde_json::from_value(Value::Object(one)).ok()
        })
    }
}

/// A configuration's `Deserialize`: reads a JSON object from `deserializer`
/// and builds the configuration with `from` (generated per configuration,
/// not generic over the deserializer).
///
/// # Errors
///
/// The input is not an object, or `from` refuses a member.
pub fn deserialize_config<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    from: fn(&mut Fields) -> Result<T, serde_json::Error>,
) -> Result<T, D::Error> {
    let mut fields = Fields(Map::deserialize(deserializer)?);
    from(&mut fields).map_err(<D::Error as de::Error>::custom)
}

/// Writes a configuration as a map of its set fields: what a generated
/// configuration's `Serialize` does, one call per field, in declaration
/// order, leaving unset (`None`) fields out.
pub struct ConfigWriter<M>(M);

impl<M: SerializeMap> ConfigWriter<M> {
    /// Starts the map of a configuration.
    ///
    /// # Errors
    ///
    /// Those of `serializer`.
    pub fn new<S: Serializer<SerializeMap = M>>(serializer: S) -> Result<Self, S::Error> {
        serializer.serialize_map(None).map(Self)
    }

    /// Writes `key` when `value` is set.
    ///
    /// # Errors
    ///
    /// Those of the serializer or of `value`.
    pub fn field<T: Serialize>(&mut self, key: &str, value: &Option<T>) -> Result<(), M::Error> {
        match value {
            Some(value) => self.0.serialize_entry(key, value),
            None => Ok(()),
        }
    }

    /// Writes the members of a `#[serde(flatten)]` field, when set, into
    /// this map (through a JSON value, so in the order of its keys; serde's
    /// derive keeps a flattened struct's field order, the JSON object is
    /// the same).
    ///
    /// # Errors
    ///
    /// The value is not a map (nor `null`), or the serializer's.
    pub fn flatten<T: Serialize>(&mut self, value: &Option<T>) -> Result<(), M::Error> {
        let Some(value) = value else { return Ok(()) };
        match serde_json::to_value(value).map_err(<M::Error as ser::Error>::custom)? {
            Value::Object(members) => members.iter().try_for_each(|(k, v)| self.0.serialize_entry(k, v)),
            Value::Null => Ok(()),
            other => {
                Err(<M::Error as ser::Error>::custom(format_args!("a flattened field must be a map, not {other}")))
            }
        }
    }

    /// Ends the map.
    ///
    /// # Errors
    ///
    /// Those of the serializer.
    pub fn end(self) -> Result<M::Ok, M::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    /// A configuration the way generated code reads one.
    #[derive(Debug, PartialEq)]
    struct Config {
        name: Option<String>,
        replicas: Option<i32>,
        rest: Option<BTreeMap<String, i64>>,
    }

    impl Serialize for Config {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = ConfigWriter::new(serializer)?;
            map.field("name", &self.name)?;
            map.flatten(&self.rest)?;
            map.field("replicas", &self.replicas)?;
            map.end()
        }
    }

    impl<'de> Deserialize<'de> for Config {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserialize_config(deserializer, |fields| {
                Ok(Self { name: fields.take("name")?, replicas: fields.take("replicas")?, rest: fields.rest() })
            })
        }
    }

    #[test]
    fn absent_and_null_members_are_none_and_named_members_are_not_in_the_rest() {
        let c: Config = serde_json::from_value(json!({"name": "a", "replicas": null, "x": 1})).unwrap();
        assert_eq!(c.name.as_deref(), Some("a"));
        assert_eq!(c.replicas, None);
        assert_eq!(c.rest, Some(BTreeMap::from([("x".to_owned(), 1)])));
    }

    /// serde's flatten of an externally tagged enum beside a flattened
    /// struct: the enum reads the member named as its variant.
    #[test]
    fn a_flattened_enum_reads_the_member_named_as_its_variant() {
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(rename_all = "camelCase")]
        enum Source {
            Git { url: String },
            Http { url: String },
        }
        #[derive(Debug, PartialEq, Deserialize)]
        struct Extra {
            retries: Option<i32>,
        }
        let fields =
            Fields(json!({"retries": 3, "http": {"url": "https://example.com"}}).as_object().cloned().unwrap());
        assert_eq!(fields.rest::<Source>(), None, "the whole rest is two members");
        assert_eq!(fields.rest_variant::<Source>(), Some(Source::Http { url: "https://example.com".into() }));
        assert_eq!(fields.rest::<Extra>(), Some(Extra { retries: Some(3) }));
        assert_eq!(Fields(Map::new()).rest_variant::<Source>(), None);
    }

    #[test]
    fn a_rest_of_another_shape_is_none() {
        let c: Config = serde_json::from_value(json!({"x": "not a number"})).unwrap();
        assert_eq!(c.rest, None);
    }

    #[test]
    fn a_wrong_member_is_named_in_the_error() {
        let err = serde_json::from_value::<Config>(json!({"replicas": "three"})).unwrap_err().to_string();
        assert!(err.contains("field `replicas`"), "{err}");
        assert!(err.contains("invalid type: string \"three\""), "{err}");
    }

    #[test]
    fn set_fields_and_flattened_members_are_written_in_order_and_read_back() {
        let c = Config { name: Some("a".into()), replicas: Some(2), rest: Some(BTreeMap::from([("x".to_owned(), 1)])) };
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(text, r#"{"name":"a","x":1,"replicas":2}"#);
        assert_eq!(serde_json::from_str::<Config>(&text).unwrap(), c);
        let empty = Config { name: None, replicas: None, rest: None };
        assert_eq!(serde_json::to_string(&empty).unwrap(), "{}");
    }

    #[test]
    fn a_flattened_field_that_is_not_a_map_is_an_error() {
        struct Odd(Option<i64>);
        impl Serialize for Odd {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = ConfigWriter::new(serializer)?;
                map.flatten(&self.0)?;
                map.end()
            }
        }
        let err = serde_json::to_string(&Odd(Some(3))).unwrap_err().to_string();
        assert!(err.contains("a flattened field must be a map, not 3"), "{err}");
    }

    #[test]
    fn only_an_object_is_a_configuration() {
        let err = serde_json::from_str::<Config>("[1]").unwrap_err().to_string();
        assert!(err.contains("expected a map"), "{err}");
    }
}
