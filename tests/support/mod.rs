pub mod textproto;
