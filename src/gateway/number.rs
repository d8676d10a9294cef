//! An amount as the banking API writes it: a JSON number of reais (`4500.0`, `830.45`).
//! Inside, it is [`Cents`]; the number exists only on the wire, written from the cents
//! and read back to the nearest cent.

use serde::{Deserialize, Deserializer, Serializer};

use crate::domain::money::Cents;

/// The JSON number of `cents`: its reais, to the cent.
pub fn serialize<S: Serializer>(cents: &Cents, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(cents.0 as f64 / 100.0)
}

/// The nearest cent of a JSON number of reais.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Cents, D::Error> {
    f64::deserialize(deserializer).map(cents)
}

fn cents(reais: f64) -> Cents {
    Cents((reais * 100.0).round() as i64)
}

/// The same, for an amount that may be null or absent.
pub mod optional {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::domain::money::Cents;

    pub fn serialize<S: Serializer>(cents: &Option<Cents>, serializer: S) -> Result<S::Ok, S::Error> {
        match cents {
            Some(cents) => super::serialize(cents, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cents>, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.map(super::cents))
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use crate::domain::money::Cents;

    #[test]
    fn amounts_travel_as_numbers_of_reais_and_round_trip_in_cents() {
        #[derive(Serialize, Deserialize)]
        struct Priced {
            #[serde(with = "super")]
            amount: Cents,
            #[serde(default, with = "super::optional")]
            paid: Option<Cents>,
        }
        for (cents, text) in
            [(1, "0.01"), (99, "0.99"), (450_000, "4500.0"), (83_045, "830.45"), (123_456_789, "1234567.89")]
        {
            let wire = serde_json::to_string(&Priced { amount: Cents(cents), paid: Some(Cents(cents)) }).unwrap();
            assert_eq!(wire, format!(r#"{{"amount":{text},"paid":{text}}}"#));
            let read: Priced = serde_json::from_str(&wire).unwrap();
            assert_eq!((read.amount, read.paid), (Cents(cents), Some(Cents(cents))));
        }
        let none = serde_json::to_string(&Priced { amount: Cents(100), paid: None }).unwrap();
        assert_eq!(none, r#"{"amount":1.0,"paid":null}"#);
        let read: Priced = serde_json::from_str(r#"{"amount": 12}"#).unwrap();
        assert_eq!((read.amount, read.paid), (Cents(1200), None));
    }
}
