pub struct Unfinished {
    pub name: String
    pub age: u32,
}
