"""Views: one module per page. They lay out what ui/ draws and classroom/ computes, and
hold no logic of their own; views/shell.py says which pages a visitor gets."""
